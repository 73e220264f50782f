import Type from 'typebox';

export const RecommendationList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        cheese: Type.Object({ id: Type.Integer({ format: 'int64' }), slug: Type.String(), name: Type.String(), milk: Type.Union([Type.String(), Type.Null()]), texture: Type.Union([Type.String(), Type.Null()]), origin: Type.Union([Type.String(), Type.Null()]), pricePerKg: Type.Union([Type.Number(), Type.Null()]) }),
        score: Type.Integer({ description: 'Higher is a better match; comparable within one answer only.' }),
        reasons: Type.Array(Type.String(), { examples: [['you like sheep milk', 'you often order cheeses from France']] }),
      }),
    ),
  },
  { $id: 'RecommendationList' },
);
export type RecommendationListView = Type.Static<typeof RecommendationList>;
